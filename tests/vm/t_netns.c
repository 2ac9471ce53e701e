// SPDX-License-Identifier: GPL-2.0
/*
 * t_netns: a process reaches the sdr devices its network namespace
 * reaches, as ib_core decides for its own users.  In the default shared
 * mode every namespace sees every RDMA device, and sdr binds from any; in
 * exclusive mode ("rdma system set netns exclusive") a device belongs to
 * one namespace, and a bind from another, by name or by GID, is ENODEV.
 *
 * A profile boot of its own (tests/vm/profiles): ib_core changes the mode
 * only while no namespace but the initial one exists, so the test deletes
 * the guest's "peer" namespace, and puts it back as tools/vm/guest-stage2
 * made it before it ends.
 */
#include <sched.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "harness.h"
#include "util.h"

/* Bind a fresh /dev/sdr to @dev (by its GID when @by_gid): 0 or errno. */
static int try_bind(const char *dev, bool by_gid, const uint8_t *gid)
{
	struct sdr_bind b;
	int fd = sdr_dev_open(), ret;

	if (fd < 0)
		return errno;
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	if (by_gid) {
		b.flags = SDR_BIND_BY_GID;
		memcpy(b.gid, gid, sizeof(b.gid));
	} else {
		snprintf((char *)b.ibdev, sizeof(b.ibdev), "%s", dev);
	}
	ret = ioctl(fd, SDR_IOC_BIND, &b) ? errno : 0;
	close(fd);
	return ret;
}

/*
 * The same binds from a new network namespace, in a child: its exit
 * status is 0 when by name and by GID both ended in @want, else 1 + the
 * errno of the first that did not (capped), 99 if unshare failed.
 */
static int bind_elsewhere(const char *dev, const uint8_t *gid, int want)
{
	int st = -1, e;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (unshare(CLONE_NEWNET))
			_exit(99);
		e = try_bind(dev, false, NULL);
		if (e != want)
			_exit(1 + (e & 63));
		e = try_bind(dev, true, gid);
		_exit(e == want ? 0 : 1 + (e & 63));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Run @cmd until it succeeds, for up to 20 s (namespaces die lazily). */
static int retry(const char *cmd)
{
	int i;

	for (i = 0; i < 80; i++) {
		if (!system(cmd))
			return 0;
		usleep(250000);
	}
	return -1;
}

TEST_T(netns_modes, 120)
{
	struct sdr_bind b;
	uint8_t gid[SDR_GID_LEN];
	int fd;

	fd = sdr_dev_open();
	if (fd < 0 && (errno == ENOENT || errno == ENODEV))
		SKIP("/dev/sdr missing: sdr.ko not loaded");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(raw_bind(fd, dev0(), 0, &b), 0);
	memcpy(gid, b.gid, sizeof(gid));
	close(fd);
	ASSERT_EQ(system("rdma system show netns | grep -q 'netns shared'"), 0);

	/* shared: another namespace binds as this one does */
	EXPECT_EQ(bind_elsewhere(dev0(), gid, 0), 0);

	/* exclusive: the devices are init_net's, no one else's */
	ASSERT_EQ(system("ip netns del peer 2>/dev/null; true"), 0);
	ASSERT_EQ(retry("rdma system set netns exclusive 2>/dev/null"), 0);
	EXPECT_EQ(bind_elsewhere(dev0(), gid, ENODEV), 0);
	EXPECT_EQ(bind_elsewhere(dev1(), gid, ENODEV), 0);
	EXPECT_EQ(try_bind(dev0(), false, NULL), 0);
	EXPECT_EQ(try_bind(NULL, true, gid), 0);

	/* back to shared, and the guest's peer namespace as it was */
	ASSERT_EQ(retry("rdma system set netns shared 2>/dev/null"), 0);
	EXPECT_EQ(bind_elsewhere(dev0(), gid, 0), 0);
	EXPECT_EQ(system("ip netns add peer && "
			 "ip link add tveth0 type veth peer name tveth1 netns peer && "
			 "ip addr add 198.19.0.1/24 dev tveth0 && "
			 "ip link set tveth0 mtu 9000 up && "
			 "ip -n peer addr add 198.19.0.2/24 dev tveth1 && "
			 "ip -n peer link set tveth1 mtu 9000 up && "
			 "ip -n peer link set lo up"), 0);
}

