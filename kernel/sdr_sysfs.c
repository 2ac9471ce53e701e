// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: /sys/class/sdr/<ibdev>/ - one directory per bound device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/module.h>

#include "sdr.h"

static struct class *sdr_class;

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", dev_name(&sdev->ibdev->dev));
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t port_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sdev->port);
}
static DEVICE_ATTR_RO(port);

static ssize_t gid_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	union ib_gid gid;
	int ret;

	ret = sdr_dev_query_gid(sdev, &gid, NULL);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%pI6\n", gid.raw);
}
static DEVICE_ATTR_RO(gid);

static ssize_t gid_index_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	union ib_gid gid;
	u32 index;
	int ret;

	ret = sdr_dev_query_gid(sdev, &gid, &index);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%u\n", index);
}
static DEVICE_ATTR_RO(gid_index);

static ssize_t mtu_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", sdr_dev_mtu(sdev));
}
static DEVICE_ATTR_RO(mtu);

static ssize_t flows_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct sdr_dev *sdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&sdev->nr_flows));
}
static DEVICE_ATTR_RO(flows);

/* counters/<name> and drops/<reason>: one u64 each, read-only. */
struct sdr_counter_attr {
	struct device_attribute	attr;
	bool			drop;
	int			index;
};

static ssize_t sdr_counter_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct sdr_counter_attr *ca = container_of(attr, struct sdr_counter_attr,
						   attr);
	struct sdr_dev *sdev = dev_get_drvdata(dev);
	atomic64_t *c = ca->drop ? &sdev->drops[ca->index] :
				   &sdev->counters[ca->index];

	return sysfs_emit(buf, "%lld\n", atomic64_read(c));
}

#define SDR_COUNTER(_name, _idx) {					\
	.attr = __ATTR(_name, 0444, sdr_counter_show, NULL),		\
	.index = _idx,							\
}

static struct sdr_counter_attr sdr_counter_attrs[] = {
	SDR_COUNTER(tx_packets, SDR_DEV_TX_PACKETS),
	SDR_COUNTER(tx_bytes, SDR_DEV_TX_BYTES),
	SDR_COUNTER(rx_packets, SDR_DEV_RX_PACKETS),
	SDR_COUNTER(rx_bytes, SDR_DEV_RX_BYTES),
	SDR_COUNTER(tx_errors, SDR_DEV_TX_ERRORS),
	SDR_COUNTER(rx_errors, SDR_DEV_RX_ERRORS),
	SDR_COUNTER(ctrl_dropped, SDR_DEV_CTRL_DROPPED),
};

static struct attribute *sdr_counter_list[ARRAY_SIZE(sdr_counter_attrs) + 1];

static const struct attribute_group sdr_counter_group = {
	.name	= "counters",
	.attrs	= sdr_counter_list,
};

/* Filled at init from the wire code's reason names. */
static struct sdr_counter_attr sdr_drop_attrs[SDR_DROP_NR];
static struct attribute *sdr_drop_list[SDR_DROP_NR];

static const struct attribute_group sdr_drop_group = {
	.name	= "drops",
	.attrs	= sdr_drop_list,
};

static struct attribute *sdr_dev_attrs[] = {
	&dev_attr_flows.attr,
	&dev_attr_ibdev.attr,
	&dev_attr_port.attr,
	&dev_attr_gid.attr,
	&dev_attr_gid_index.attr,
	&dev_attr_mtu.attr,
	NULL,
};

static const struct attribute_group sdr_dev_group = {
	.attrs = sdr_dev_attrs,
};

static const struct attribute_group *sdr_dev_groups[] = {
	&sdr_dev_group,
	&sdr_counter_group,
	&sdr_drop_group,
	NULL,
};

int sdr_sysfs_add_dev(struct sdr_dev *sdev)
{
	struct device *dev;

	dev = device_create_with_groups(sdr_class, &sdev->ibdev->dev,
					MKDEV(0, 0), sdev, sdr_dev_groups,
					"%s", sdev->name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	sdev->cdev = dev;
	return 0;
}

void sdr_sysfs_del_dev(struct sdr_dev *sdev)
{
	device_unregister(sdev->cdev);
	sdev->cdev = NULL;
}

int sdr_sysfs_init(void)
{
	int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(sdr_counter_attrs); i++)
		sdr_counter_list[i] = &sdr_counter_attrs[i].attr.attr;
	/* Every reason but "none" (0) gets a file. */
	for (i = 1; i < SDR_DROP_NR; i++) {
		struct sdr_counter_attr *ca = &sdr_drop_attrs[n];

		sysfs_attr_init(&ca->attr.attr);
		ca->attr.attr.name = sdr_drop_reason_name(i);
		ca->attr.attr.mode = 0444;
		ca->attr.show = sdr_counter_show;
		ca->drop = true;
		ca->index = i;
		sdr_drop_list[n++] = &ca->attr.attr;
	}
	sdr_class = class_create(THIS_MODULE, "sdr");
	return PTR_ERR_OR_ZERO(sdr_class);
}

void sdr_sysfs_exit(void)
{
	class_destroy(sdr_class);
}
