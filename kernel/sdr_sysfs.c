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

static struct attribute *sdr_dev_attrs[] = {
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
	sdr_class = class_create(THIS_MODULE, "sdr");
	return PTR_ERR_OR_ZERO(sdr_class);
}

void sdr_sysfs_exit(void)
{
	class_destroy(sdr_class);
}
