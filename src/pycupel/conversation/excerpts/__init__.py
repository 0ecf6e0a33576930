"""Excerpts of long texts: cut where a reader would, the valuable segments kept, gaps marked.

A tool output of 40,000 tokens rarely fits whole, and a head-and-tail truncation drops the
line the agent needs whenever it sits in the middle. An excerpt keeps the segments that
matter to the question and marks every gap with a reference the recall tool can expand:

* :mod:`~pycupel.conversation.excerpts.segments`: a text cut into segments by its shape
  (JSON elements and members, log lines, code blocks, table rows, config sections, prose);
* :mod:`~pycupel.conversation.excerpts.relevance`: each segment's value for the question;
* :mod:`~pycupel.conversation.excerpts.excerpt`: a chosen set of segments rendered with its
  gap markers;
* :mod:`~pycupel.conversation.excerpts.plan`: a fit's excerpt plans built and rendered as
  versions of their units;
* :mod:`~pycupel.conversation.excerpts.allocation`: the room of one budget shared between
  whole units and segments of the excerptable ones;
* :mod:`~pycupel.conversation.excerpts.settle`: the rendered excerpts counted exactly and
  trimmed to the room.
"""
