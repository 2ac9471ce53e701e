/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces sdr.ko uses that changed between the kernels it
 * builds for (Debian 12's 6.1 and 6.12), behind one name each, so that the
 * code proper tests no kernel.  Each SDR_HAVE_* comes from kernel/Kbuild,
 * which looks for the interface in the headers it builds against.
 */
#ifndef SDR_KCOMPAT_H
#define SDR_KCOMPAT_H

#include <linux/device/class.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/module.h>

/* 6.3: vma->vm_flags is read-only, changed through vm_flags_set/clear() */
static inline void sdr_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef SDR_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void sdr_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
#ifdef SDR_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 6.4: class_create() lost its owner argument */
static inline struct class *sdr_class_create(const char *name)
{
#ifdef SDR_HAVE_CLASS_CREATE_NAME
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
#ifdef SDR_HAVE_GET_OWNERSHIP_CONST
#define sdr_get_ownership(name) \
	void name(const struct kobject *kobj, kuid_t *uid, kgid_t *gid)
#else
#define sdr_get_ownership(name) \
	void name(struct kobject *kobj, kuid_t *uid, kgid_t *gid)
#endif

#endif /* SDR_KCOMPAT_H */
