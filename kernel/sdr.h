/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sdr: software-defined reliability over UD - internal definitions.
 *
 * Lock order (outermost first):
 *   sdr_devs_lock (mutex, sdr_main.c)
 *     sdr_ctx.lock (mutex)
 *       sdr_dev.flows_lock (spinlock, _bh)
 *         sdr_flow.lock (spinlock, _bh)
 *           sdr_ctx.cq_lock (spinlock, _bh)
 * sdr_dev.tx_lock (spinlock, _bh) is a leaf: taken with nothing else needed
 * inside it.
 */
#ifndef SDR_H
#define SDR_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>

#define SDR_QKEY_DEFAULT	0x5d520001

/* One bound RDMA device (one RoCE port of it). */
struct sdr_dev {
	struct list_head	list;		/* in sdr_devs, under sdr_devs_lock */
	struct kref		ref;		/* the list holds one; each ctx one */
	struct ib_device	*ibdev;		/* NULL once removed */
	u32			port;
	struct device		*cdev;		/* /sys/class/sdr/<ibdev> */
	char			name[IB_DEVICE_NAME_MAX];
	bool			dying;		/* under sdr_devs_lock */
};

extern struct mutex sdr_devs_lock;
extern struct list_head sdr_devs;
extern atomic_t sdr_nr_ctx;		/* open contexts, for leak checks */

struct sdr_dev *sdr_dev_get_by_name(const char *name);
void sdr_dev_put(struct sdr_dev *sdev);
int sdr_dev_query_gid(struct sdr_dev *sdev, union ib_gid *gid, u32 *index);
u32 sdr_dev_mtu(struct sdr_dev *sdev);

int sdr_sysfs_init(void);
void sdr_sysfs_exit(void);
int sdr_sysfs_add_dev(struct sdr_dev *sdev);
void sdr_sysfs_del_dev(struct sdr_dev *sdev);

int sdr_cdev_init(void);
void sdr_cdev_exit(void);

#endif /* SDR_H */
