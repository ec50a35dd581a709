"""kubesched.cli"""
