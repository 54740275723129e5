"""Roofline Workbench: the roofline model as a live, explained desktop tool."""

__version__ = "0.1.0"
