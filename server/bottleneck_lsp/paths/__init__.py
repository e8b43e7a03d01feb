"""Files and folders: a script's project root, a module's file, recorded paths mapped onto
the files here (``relocate``). Imports ``schema`` only."""
