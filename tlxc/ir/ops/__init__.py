"""The op catalog, grouped by area. Importing this package registers every op."""

from .amd import *  # noqa: F401,F403
from .arith import *  # noqa: F401,F403
from .arith import MATH_FUNCTIONS, MATH_OPS, PREDICATES  # noqa: F401
from .async_copy import *  # noqa: F401,F403
from .atomics import *  # noqa: F401,F403
from .barriers import *  # noqa: F401,F403
from .buffers import *  # noqa: F401,F403
from .cluster import *  # noqa: F401,F403
from .control import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .inline_asm import *  # noqa: F401,F403
from .memory import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .scan import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .tasks import *  # noqa: F401,F403
from .warp import *  # noqa: F401,F403
from .wgmma import *  # noqa: F401,F403
