"""Plain helpers the test modules share (data writers, a loopback LLM server, scripted clients, paths).

Fixtures live in the ``conftest.py`` of the folder that shares them; a test module never imports another
test module (``tests/meta/test_layout.py`` checks both)."""
