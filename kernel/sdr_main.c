// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: software-defined reliability over UD - module init and ib_client.
 *
 * sdr binds to every RoCE device as it appears (ib_client add) and releases
 * it in remove.  A bound device is a struct sdr_dev on sdr_devs; contexts
 * (open /dev/sdr files) hold a reference to it, so remove() first marks it
 * dying, then tears down everything that uses the ib_device, and the
 * memory goes with the last reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "sdr.h"

/* Guards sdr_devs and every sdr_dev.dying. */
DEFINE_MUTEX(sdr_devs_lock);
LIST_HEAD(sdr_devs);
atomic_t sdr_nr_ctx = ATOMIC_INIT(0);
static atomic_t sdr_nr_devs = ATOMIC_INIT(0);

static struct ib_client sdr_ib_client;

static void sdr_dev_release(struct kref *ref)
{
	struct sdr_dev *sdev = container_of(ref, struct sdr_dev, ref);

	atomic_dec(&sdr_nr_devs);
	kfree(sdev);
}

void sdr_dev_put(struct sdr_dev *sdev)
{
	kref_put(&sdev->ref, sdr_dev_release);
}

/* Look up a live device by name; returns it with a reference, or NULL. */
struct sdr_dev *sdr_dev_get_by_name(const char *name)
{
	struct sdr_dev *sdev, *found = NULL;

	mutex_lock(&sdr_devs_lock);
	list_for_each_entry(sdev, &sdr_devs, list) {
		if (!sdev->dying && !strcmp(sdev->name, name)) {
			kref_get(&sdev->ref);
			found = sdev;
			break;
		}
	}
	mutex_unlock(&sdr_devs_lock);
	return found;
}

/*
 * The GID sdr uses on a port: the first RoCE v2 GID that carries an IPv4
 * address (what rdma link add on an addressed netdev creates), else the
 * first RoCE v2 GID, else index 0.  The table changes with the netdev's
 * addresses, so this is asked each time, never cached.
 */
int sdr_dev_query_gid(struct sdr_dev *sdev, union ib_gid *gid, u32 *index)
{
	const struct ib_gid_attr *attr;
	int v2 = -1, v4 = -1;
	u32 i, len;

	len = rdma_port_get_link_layer(sdev->ibdev, sdev->port) ==
	      IB_LINK_LAYER_ETHERNET ?
	      sdev->ibdev->port_data[sdev->port].immutable.gid_tbl_len : 1;
	for (i = 0; i < len && v4 < 0; i++) {
		attr = rdma_get_gid_attr(sdev->ibdev, sdev->port, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			if (v2 < 0)
				v2 = i;
			if (ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw))
				v4 = i;
		}
		rdma_put_gid_attr(attr);
	}
	i = v4 >= 0 ? v4 : v2 >= 0 ? v2 : 0;
	if (index)
		*index = i;
	return rdma_query_gid(sdev->ibdev, sdev->port, i, gid);
}

/* Active IB MTU of the port in bytes (what one UD send may carry). */
u32 sdr_dev_mtu(struct sdr_dev *sdev)
{
	struct ib_port_attr attr;

	if (ib_query_port(sdev->ibdev, sdev->port, &attr))
		return 0;
	return ib_mtu_enum_to_int(attr.active_mtu);
}

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

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	kref_init(&sdev->ref);
	sdev->ibdev = ibdev;
	sdev->port = port;
	strscpy(sdev->name, dev_name(&ibdev->dev), sizeof(sdev->name));
	atomic_inc(&sdr_nr_devs);

	ret = sdr_sysfs_add_dev(sdev);
	if (ret)
		goto err_put;

	mutex_lock(&sdr_devs_lock);
	list_add_tail(&sdev->list, &sdr_devs);
	mutex_unlock(&sdr_devs_lock);
	ib_set_client_data(ibdev, &sdr_ib_client, sdev);
	pr_info("%s: bound, port %u, mtu %u\n", sdev->name, port,
		sdr_dev_mtu(sdev));
	return 0;

err_put:
	sdr_dev_put(sdev);
	return ret;
}

static void sdr_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;

	mutex_lock(&sdr_devs_lock);
	sdev->dying = true;
	list_del(&sdev->list);
	mutex_unlock(&sdr_devs_lock);

	sdr_sysfs_del_dev(sdev);
	pr_info("%s: released\n", sdev->name);
	sdev->ibdev = NULL;
	sdr_dev_put(sdev);
}

static void sdr_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct sdr_dev *sdev = client_data;

	mutex_lock(&sdr_devs_lock);
	strscpy(sdev->name, dev_name(&ibdev->dev), sizeof(sdev->name));
	mutex_unlock(&sdr_devs_lock);
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

	ret = sdr_sysfs_init();
	if (ret)
		return ret;
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
	return ret;
}

static void __exit sdr_exit(void)
{
	/* No context can be open: each holds a module reference. */
	ib_unregister_client(&sdr_ib_client);
	sdr_cdev_exit();
	sdr_sysfs_exit();
	if (atomic_read(&sdr_nr_devs) || atomic_read(&sdr_nr_ctx))
		pr_err("leak: %d devices, %d contexts still allocated\n",
		       atomic_read(&sdr_nr_devs), atomic_read(&sdr_nr_ctx));
}

module_init(sdr_init);
module_exit(sdr_exit);

MODULE_AUTHOR("sdr developers");
MODULE_DESCRIPTION("Software-defined reliability over RDMA UD queue pairs");
MODULE_LICENSE("GPL");
