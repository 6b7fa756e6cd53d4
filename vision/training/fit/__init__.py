"""The recipes: one per network, each its data mix, its settings and its start point.

A new network gets its recipe here, beside stage 1's (corners), stage 2's (names) and the
orientation network's; enrolment and "Improve from corrections" (:mod:`.enrol`) run the same
recipes with other settings.
"""
