"""kubesched.queue"""
