import sys

from gojax.cli import main

sys.exit(main())
