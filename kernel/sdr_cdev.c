// SPDX-License-Identifier: GPL-2.0
/*
 * sdr: /dev/sdr - one open file is one context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "sdr.h"

struct sdr_ctx {
	struct sdr_dev	*sdev;	/* bound device, or NULL */
};

static int sdr_open(struct inode *inode, struct file *file)
{
	struct sdr_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	atomic_inc(&sdr_nr_ctx);
	file->private_data = ctx;
	return 0;
}

static int sdr_release(struct inode *inode, struct file *file)
{
	struct sdr_ctx *ctx = file->private_data;

	if (ctx->sdev)
		sdr_dev_put(ctx->sdev);
	kfree(ctx);
	atomic_dec(&sdr_nr_ctx);
	return 0;
}

static long sdr_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return -ENOTTY;
}

static const struct file_operations sdr_fops = {
	.owner		= THIS_MODULE,
	.open		= sdr_open,
	.release	= sdr_release,
	.unlocked_ioctl	= sdr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice sdr_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "sdr",
	.fops	= &sdr_fops,
	.mode	= 0666,
};

int sdr_cdev_init(void)
{
	return misc_register(&sdr_misc);
}

void sdr_cdev_exit(void)
{
	misc_deregister(&sdr_misc);
}
