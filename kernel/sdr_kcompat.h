/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces sdr.ko uses that changed between the kernels it
 * builds for (Debian 12's 6.1 and 6.12), behind one name each, so that the
 * code proper has no version tests.  Keyed on LINUX_VERSION_CODE: each
 * change went in at one release and was not backported to 6.1.
 */
#ifndef SDR_KCOMPAT_H
#define SDR_KCOMPAT_H

#include <linux/version.h>
#include <linux/device/class.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/module.h>

/* 6.3: vma->vm_flags is read-only, changed through vm_flags_set/clear() */
static inline void sdr_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void sdr_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 6.4: class_create() lost its owner argument */
static inline struct class *sdr_class_create(const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/*
 * 6.2: kobj_type's get_ownership() takes a const kobject.  Declare the
 * callback as sdr_get_ownership(name) { ... } with its parameters named
 * kobj, uid and gid.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define sdr_get_ownership(name) \
	void name(const struct kobject *kobj, kuid_t *uid, kgid_t *gid)
#else
#define sdr_get_ownership(name) \
	void name(struct kobject *kobj, kuid_t *uid, kgid_t *gid)
#endif

#endif /* SDR_KCOMPAT_H */
