"""kubesched.plugins"""
