"""The worker's copy of the world.

Written by intake and claims, read by the pipeline.
"""
