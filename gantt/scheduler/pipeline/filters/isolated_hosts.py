"""IsolatedHostsFilter: some images run only on some hosts.

``[filter_scheduler] isolated_images`` run only on ``isolated_hosts``; with
``restrict_isolated_hosts_to_isolated_images`` (the default) those hosts
run nothing else. An instance booted without an image (from a volume) is
not isolated.
"""

from gantt.scheduler.pipeline import filters


class IsolatedHostsFilter(filters.BaseFilter):
    name = "IsolatedHostsFilter"
    provider_kinds = filters.COMPUTE

    def _settings(self, request):
        fs = self.conf.filter_scheduler
        image_isolated = request.image_id in fs.isolated_images
        return (fs.isolated_images, fs.isolated_hosts, image_isolated,
                fs.restrict_isolated_hosts_to_isolated_images)

    def applies(self, request):
        images, hosts, _iso, _restrict = self._settings(request)
        return bool(images or hosts)

    @staticmethod
    def _rule(images, host_isolated, image_isolated, restrict):
        if not images:
            return (not restrict) or (not host_isolated)
        if restrict:
            return image_isolated == host_isolated
        return (not image_isolated) or host_isolated

    def host_passes(self, host, request):
        images, hosts, image_isolated, restrict = self._settings(request)
        return self._rule(images, host.host in hosts, image_isolated,
                          restrict)

    def passes_columns(self, view, request):
        images, hosts, image_isolated, restrict = self._settings(request)
        host_isolated = view.rows_of_hosts(hosts)
        if not images:
            return ~host_isolated | (not restrict)
        if restrict:
            return host_isolated == image_isolated
        return host_isolated | (not image_isolated)
