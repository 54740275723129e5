"""The application: ``app`` (the QApplication, created once), ``launch`` (start-up and the
event loop), ``main_window`` (menus, files, settings; it assembles the chart and the panels)
and ``docks`` (where the panels sit).

May import every room of :mod:`workbench.ui`; only the command line imports it.
"""
