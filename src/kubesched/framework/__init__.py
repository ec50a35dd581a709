"""kubesched.framework"""
