"""Runs only when Python takes this clone's folder for the package `gojax`.

From the folder that holds a clone named `gojax`, `python -m gojax` (and `import gojax`) find the
clone's folder first, a package without code, ahead of an editable install.  Say so and what to do.
"""

import os
import sys

clone = os.path.dirname(os.path.abspath(__file__))
sys.exit(
    f"gojax: Python took the folder {clone} (a clone of gojax) for the package, because the current\n"
    f"folder holds it.  Run from inside the clone (cd {clone}) or from any other folder, or install a\n"
    f"copy that imports from anywhere: pip install {clone}")
