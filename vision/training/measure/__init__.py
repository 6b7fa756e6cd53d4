"""How well a model reads: the model card's report, evaluation, doubt calibration, enrolment rows.

A new measurement goes here, with its row in :mod:`.report`.
"""
