# tests/pytest/first.sh: with FIRST_COLLECT_ERROR set this file does not
# import (as with a syntax error), so pytest stops at collection, the
# other file's tests collected and none of them run. No tests otherwise.
import os

if os.environ.get("FIRST_COLLECT_ERROR"):
    raise SyntaxError("the collection breaks")
