"""Node resource plugins (upstream ``pkg/scheduler/framework/plugins/noderesources``):
NodeResourcesFit (:mod:`.fit`) and NodeResourcesBalancedAllocation (:mod:`.balanced_allocation`),
sharing the scoring machinery of :mod:`.resource_allocation`."""

from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit, FitRequest, InsufficientResource, fits, fits_request

__all__ = ["BalancedAllocation", "Fit", "FitRequest", "InsufficientResource", "fits", "fits_request"]
