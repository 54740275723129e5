"""The application: ``app`` (the QApplication, created once), ``launch`` (start-up and the
event loop), ``main_window`` (it assembles the chart and the panels, and keeps the settings)
and its parts: ``docks`` (where the panels sit), ``menus`` (the actions and menus), ``files``
(open, save, recent files, autosave and recovery), ``exporting`` (figure and results
exports, the clipboard) and ``help_pages`` (the Help menu's pages).

May import every room of :mod:`workbench.ui`; only the command line imports it.
"""
