"""The errors Nova's clients rebuild as Nova's own types.

oslo.messaging sends a failure as its class's module and name, and a
caller rebuilds it only from the modules it allows: Nova allows
``nova.exception``. These classes therefore say that they are
``nova.exception``'s (their ``__module__``), with the arguments Nova's
constructors take, so that Nova's conductor catches
``nova.exception.NoValidHost`` from Gantt as it does from nova-scheduler.
Gantt never imports Nova: the names are a wire contract.
"""

#: the module Nova's clients allow remote errors from
NOVA_EXCEPTION_MODULE = "nova.exception"


class NovaWireError(Exception):
    """An error that crosses the wire as ``nova.exception.<name>``: the
    message as Nova formats it, its keyword arguments in ``kwargs`` (Nova's
    ``NovaException(message, **kwargs)`` is rebuilt from both)."""

    msg_fmt = "%(reason)s"

    def __init__(self, **kwargs):
        self.kwargs = dict(kwargs)
        super().__init__(self.msg_fmt % kwargs)


class NoValidHost(NovaWireError):
    msg_fmt = "No valid host was found. %(reason)s"


NoValidHost.__module__ = NOVA_EXCEPTION_MODULE
