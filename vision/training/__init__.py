"""Training and evaluation of the card detector, apart from the runtime in :mod:`vision`.

The synthetic data generator (faces, decks, backgrounds, scenes, generate), the real
dataset import, training and export (train) and the model evaluation (evaluate) live
here. Only the training commands (``tiplu generate``, ``tiplu train``, ``tiplu
eval-model``) and their tests import this package, so the web app and ``tiplu detect``
never load it (nor torch or Ultralytics).
"""
