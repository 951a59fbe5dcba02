// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The module's devices, one per netdev. The list exists because siwx
 * registers with RDMA_DRIVER_UNKNOWN, an id other drivers may share:
 * ib_core's lookups and ib_unregister_driver() by driver id would reach
 * devices that are not ours.
 */
#include <linux/mutex.h>
#include <linux/netdevice.h>

#include "siwx.h"

static LIST_HEAD(siwx_devs);
/* Protects siwx_devs; taken under rtnl (netdev events), never around it */
static DEFINE_MUTEX(siwx_devs_lock);

/*
 * Claim dev->netdev for @dev: one siwx device per netdev, since the iWARP CM
 * finds the device of a connection by the local IP address.
 */
int siwx_dev_list_add(struct siwx_dev *dev)
{
	struct siwx_dev *cur;
	int rv = 0;

	mutex_lock(&siwx_devs_lock);
	list_for_each_entry(cur, &siwx_devs, list) {
		if (cur->netdev == dev->netdev) {
			rv = -EEXIST;
			goto out;
		}
	}
	list_add_tail(&dev->list, &siwx_devs);
out:
	mutex_unlock(&siwx_devs_lock);
	return rv;
}

void siwx_dev_list_del(struct siwx_dev *dev)
{
	mutex_lock(&siwx_devs_lock);
	list_del_init(&dev->list);
	mutex_unlock(&siwx_devs_lock);
}

/*
 * The registered siwx device on @netdev, with a reference the caller
 * drops with ib_device_put(); NULL if there is none. A device that is
 * still registering or already unregistering has no references to give
 * (ib_device_try_get() fails), so it is never returned.
 */
struct siwx_dev *siwx_dev_find(struct net_device *netdev)
{
	struct siwx_dev *cur, *found = NULL;

	mutex_lock(&siwx_devs_lock);
	list_for_each_entry(cur, &siwx_devs, list) {
		if (cur->netdev == netdev && ib_device_try_get(&cur->ibdev)) {
			found = cur;
			break;
		}
	}
	mutex_unlock(&siwx_devs_lock);
	return found;
}

/*
 * Whether a siwx device serves the loopback netdev: the one that takes
 * connections to 127.0.0.0/8 and ::1 (siwx_iw_create_listen()).
 */
bool siwx_dev_on_loopback(void)
{
	struct siwx_dev *cur;
	bool found = false;

	mutex_lock(&siwx_devs_lock);
	list_for_each_entry(cur, &siwx_devs, list) {
		if (cur->netdev->flags & IFF_LOOPBACK) {
			found = true;
			break;
		}
	}
	mutex_unlock(&siwx_devs_lock);
	return found;
}

/*
 * Unregister every device. Each unregistration ends in dealloc_driver,
 * which takes the device off the list; one that another path (rdma link
 * delete, a queued netdev unregistration) is already tearing down is
 * waited for inside ib_unregister_device().
 */
void siwx_dev_remove_all(void)
{
	struct siwx_dev *dev;

	for (;;) {
		mutex_lock(&siwx_devs_lock);
		dev = list_first_entry_or_null(&siwx_devs, struct siwx_dev,
					       list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&siwx_devs_lock);
		if (!dev)
			break;
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
	}
}
