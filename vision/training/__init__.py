"""Training and evaluation of the card detector, apart from the runtime in :mod:`vision`.

Three folders by what each part does: :mod:`vision.training.data` makes what the networks learn
from (decks, faces, scenes, their effects, imported photos), :mod:`vision.training.fit` holds one
recipe per network with its settings (and enrolment, which runs them), and
:mod:`vision.training.measure` says how well a model reads (the model card's report, evaluation,
doubt calibration). ``web/`` reaches them only through :mod:`vision.training.api`, and only inside
the training commands (``tiplu generate``, ``tiplu train``, ...) and the Decks page's background
jobs, so the web app and ``tiplu detect`` never load this package (nor torch or Ultralytics) until
training starts.
"""
