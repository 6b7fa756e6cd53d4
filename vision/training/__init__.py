"""Training and evaluation of the card detector, apart from the runtime in :mod:`vision`.

The synthetic data generator (faces, decks, backgrounds, scenes, generate), the real
dataset import, training and export (train), the campaign that resumes across sessions
(accumulate), deck enrolment (enrol) and the measurements (evaluate, report, calibrate)
live here. ``web/`` reaches them only through :mod:`vision.training.api`, and only inside
the training commands (``tiplu generate``, ``tiplu train``, ...) and the Decks page's
background jobs, so the web app and ``tiplu detect`` never load this package (nor torch or
Ultralytics) until training starts.
"""
