"""The desktop user interface: everything that imports PySide6 or pyqtgraph.

Rooms named for what a user sees, lowest first. A room may import its own modules, the rooms
it names below and the two shared modules here; never a room above it or beside it
(``tests/test_import_layers.py`` checks it):

* ``bridge``, ``widgets`` (here): shared by every room: the document's Qt side (its change
  signal, the selection) and the input widgets (64-bit spin box, SI quantity edit);
* ``chart``: the live roofline chart: the canvas and its parts, items, axes, themes;
* ``editors``: the operation editor (fields, steps, sweep, derivation), the whole model's
  set-up form, the machine form;
* ``dialogs``: hardware presets, measuring this machine, what an opened file left to defaults;
* ``figures``: export to PNG, SVG, PDF and the clipboard, figure sizes, the Export dialog;
  imports ``chart``;
* ``panels``: the docked panels and their table models (operations, results, machines,
  measurements, compare, model, sweep plot); imports ``chart``, ``editors`` and ``dialogs``;
* ``window``: the application and its main window, which assembles all of the above.

Nothing below the user interface (model, io, document, measure) imports it; the command line
above it does.
"""
