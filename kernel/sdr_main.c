// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: software-defined reliability over UD - module init and ib_client.
 *
 * sdr binds to every RoCE device as it appears (ib_client add) and releases
 * it in remove.  A bound device is a struct sdr_dev on sdr_devs; contexts
 * (open /dev/sdr files) hold a reference to it, so remove() first marks it
 * dying, then tears down everything that uses the ib_device, and the
 * memory goes with the last reference.  This file only wires the parts
 * together: nothing calls into it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "sdr.h"

static struct ib_client sdr_ib_client;

static int sdr_ib_add(struct ib_device *ibdev)
{
	struct sdr_dev *sdev;
	u32 port;
	int ret;

	rdma_for_each_port(ibdev, port)
		if (rdma_protocol_roce(ibdev, port))
			break;
	if (port > rdma_end_port(ibdev)) {
		pr_info("%s: not a RoCE device, not binding\n",
			dev_name(&ibdev->dev));
		return -EOPNOTSUPP;
	}
	if (ibdev->attrs.max_send_sge < 3) {
		pr_info("%s: needs 3 send SGEs, device has %d, not binding\n",
			dev_name(&ibdev->dev), ibdev->attrs.max_send_sge);
		return -EOPNOTSUPP;
	}

	sdev = sdr_dev_alloc(ibdev, port);
	if (!sdev)
		return -ENOMEM;

	ret = sdr_net_init(sdev);
	if (ret) {
		pr_info("%s: cannot set up the UD transport (%d), not binding\n",
			sdev->name, ret);
		goto err_put;
	}
	ret = sdr_sysfs_add_dev(sdev);
	if (ret)
		goto err_net;

	sdr_dev_list_add(sdev);
	ib_set_client_data(ibdev, &sdr_ib_client, sdev);
	pr_info("%s: bound, port %u, mtu %u\n", sdev->name, port,
		sdr_dev_mtu(sdev));
	return 0;

err_net:
	sdr_net_stop(sdev);
	sdr_net_free(sdev);
err_put:
	sdr_dev_put(sdev);
	return ret;
}

/*
 * The device is going away: stop new users, fail every flow's pending
 * work, drain the transport, drop what holds the ib_device, then free.
 * Contexts keep their (now dead) flows until they close.
 */
static void sdr_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;
	struct sdr_flow *flow;
	unsigned long id;
	struct ib_ah *ah;

	sdr_dev_list_del(sdev);

	down_write(&sdev->rwsem);
	sdev->dying = true;
	/*
	 * The device's own flows stay (their destruction waits for the
	 * rwsem); other devices' flows with a rail here go on without it,
	 * and may be destroyed meanwhile (sdr_dev_rails_*() take each).
	 */
	sdr_dev_rails_gone(sdev);
	xa_for_each(&sdev->flows, id, flow) {
		if (xa_get_mark(&sdev->flows, id, SDR_XA_RAIL))
			continue;
		sdr_flow_shutdown(flow, SDR_STATUS_FLUSHED);
		sdr_sysfs_del_flow(flow);
	}
	sdr_net_stop(sdev);
	sdr_dev_rails_release(sdev);
	xa_for_each(&sdev->flows, id, flow) {
		if (xa_get_mark(&sdev->flows, id, SDR_XA_RAIL))
			continue;	/* not this device's: its rails let go */
		ah = xchg(&flow->ah, NULL);
		if (ah)
			rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		xa_erase(&sdev->flows, id);
		atomic_dec(&sdev->nr_flows);
	}
	/* Flows freed meanwhile destroy their address handles there. */
	flush_workqueue(sdr_wq);
	sdr_net_free(sdev);
	up_write(&sdev->rwsem);

	sdr_sysfs_del_dev(sdev);
	pr_info("%s: released\n", sdev->name);
	sdr_dev_put(sdev);
}

static void sdr_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;

	sdr_dev_rename(sdev, dev_name(&ibdev->dev));
}

static struct ib_client sdr_ib_client = {
	.name	= "sdr",
	.add	= sdr_ib_add,
	.remove	= sdr_ib_remove,
	.rename	= sdr_ib_rename,
};

static int __init sdr_init(void)
{
	int ret;

	sdr_ec_codec_init();
	ret = sdr_dev_init();
	if (ret)
		return ret;
	ret = sdr_sysfs_init();
	if (ret)
		goto err_wq;
	ret = sdr_cdev_init();
	if (ret)
		goto err_sysfs;
	ret = ib_register_client(&sdr_ib_client);
	if (ret)
		goto err_cdev;
	return 0;

err_cdev:
	sdr_cdev_exit();
err_sysfs:
	sdr_sysfs_exit();
err_wq:
	sdr_dev_exit();
	return ret;
}

static void __exit sdr_exit(void)
{
	/* No context can be open: each holds a module reference. */
	ib_unregister_client(&sdr_ib_client);
	sdr_cdev_exit();
	sdr_sysfs_exit();
	sdr_dev_exit();
}

module_init(sdr_init);
module_exit(sdr_exit);

MODULE_AUTHOR("sdr developers");
MODULE_DESCRIPTION("Software-defined reliability over RDMA UD queue pairs");
MODULE_LICENSE("GPL");
