"""What the networks learn from: rendered decks and scenes, their effects, and imported photos.

Card faces (:mod:`.faces`, :mod:`.decks`, :mod:`.procedural`), tables (:mod:`.backgrounds`),
scenes laid from them (:mod:`.scenes`) with the camera's effects (:mod:`.effects`), written as
YOLO folders (:mod:`.generate`, :mod:`.dataset`); real photos (:mod:`.dataset`'s import,
:mod:`.photo_import`, :mod:`.turned`), crops of stage 1's own boxes (:mod:`.hard_crops`) and the
enrolment test photos (:mod:`.enrol_photos`). A new data effect goes into :mod:`.effects`.
"""
