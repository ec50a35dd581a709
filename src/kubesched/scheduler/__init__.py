"""kubesched.scheduler"""
