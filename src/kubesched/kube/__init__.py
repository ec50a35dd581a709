"""kubesched.kube"""
