"""kubesched.cache"""
