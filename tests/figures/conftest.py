"""Figures are drawn in a running application, as the app and ``render`` draw them: every
test here has one (pytest-qt's), whichever test of the run made it first."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _running_app(qapp):
    return qapp
