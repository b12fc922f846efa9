"""RequestContext: who asked, and the request id that ties logs together."""

from oslo_context import context


class RequestContext(context.RequestContext):
    """Gantt's request context; any dict a caller sends becomes one."""

    @classmethod
    def from_wire(cls, values):
        if not isinstance(values, dict):
            values = {}
        known = {k: v for k, v in values.items()
                 if k in ("user_id", "project_id", "request_id",
                          "global_request_id", "user_name", "project_name",
                          "is_admin", "roles", "read_only")}
        if isinstance(values.get("user"), str):
            known.setdefault("user_id", values["user"])
        if isinstance(values.get("project_id"), str):
            known.setdefault("project_id", values["project_id"])
        return cls(**known)


def get_admin_context():
    # overwrite=False: the thread's current context (the caller's request
    # id in every log line) must survive an internal cast made on its behalf
    return RequestContext(is_admin=True, overwrite=False)
