"""``kubesched sweep``: what-if studies — inputs × scheduler configurations × seeds, on Ray.

A spec (:mod:`kubesched.sweep.spec`) names the inputs (``-f`` manifest sets, ``replay`` traces
with a load factor), the KubeSchedulerConfiguration variants (a grid or a list of patches on a
base configuration), the seeds and the metrics. :mod:`kubesched.sweep.runner` runs one
configuration on one input in-process (the same code as ``simulate`` / ``replay``) and measures
it; :mod:`kubesched.sweep.execute` runs every run as one Ray task (or serially, in this
process), keeps each finished run in the output folder under its hash (a sweep resumes where
it stopped) and streams results back; :mod:`kubesched.sweep.output` writes the table, the
summary, the plots and the HTML page.

Layer: above ``sim``, below ``cli`` (docs/architecture.md).
"""
