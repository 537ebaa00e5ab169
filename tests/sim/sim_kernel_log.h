/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim_kernel_log.h -- simboard: the boot log of the simulated arm64 kernel
 *
 * One entry per console line: when it is due (ms after the kernel started;
 * 0 prints the 0.000000 timestamp of the earliest messages), what kind of
 * line it is, and its text.  Texts are printf formats taking the hostname.
 * Included by sim_kernel.c only.
 */

enum kline_kind {
	KL_TEXT,	/* kernel message */
	KL_CMDLINE,	/* "Kernel command line: ..." */
	KL_RD,		/* kernel message printed only with an initramfs */
	KL_NORD,	/* kernel message printed only without one */
	KL_MID,		/* half way: oops, hang-kernel and reset-loop strike here */
	KL_ROOT,	/* mounting the root fs: panic mode strikes here */
	KL_INIT,	/* "Run /init as init process" and its arguments */
	KL_USER,	/* userspace console output, no timestamp, not in dmesg */
	KL_END,		/* the login prompt */
};

struct kline {
	unsigned short ms;
	unsigned char kind;
	const char *text;
};

#define K(ms, s)	{ ms, KL_TEXT, s }
#define U(ms, s)	{ ms, KL_USER, s }

static const struct kline klog_lines[] = {
	K(0, "Booting Linux on physical CPU 0x0000000000 [0x411fd070]"),
	K(0, SIM_LINUX_BANNER),
	K(0, "random: crng init done"),
	K(0, "Machine model: Simulated ARM64 Board"),
	K(0, "efi: UEFI not found."),
	K(0, "NUMA: No NUMA configuration found"),
	K(0, "NUMA: Faking a node at [mem 0x0000000040000000-0x000000007fffffff]"),
	K(0, "NUMA: NODE_DATA [mem 0x7fdf5a00-0x7fdf7fff]"),
	K(0, "Zone ranges:"),
	K(0, "  DMA      [mem 0x0000000040000000-0x000000007fffffff]"),
	K(0, "  DMA32    empty"),
	K(0, "  Normal   empty"),
	K(0, "Movable zone start for each node"),
	K(0, "Early memory node ranges"),
	K(0, "  node   0: [mem 0x0000000040000000-0x000000007fffffff]"),
	K(0, "Initmem setup node 0 [mem 0x0000000040000000-0x000000007fffffff]"),
	K(0, "cma: Reserved 32 MiB at 0x000000007c000000"),
	K(0, "psci: probing for conduit method from DT."),
	K(0, "psci: PSCIv1.1 detected in firmware."),
	K(0, "psci: Using standard PSCI v0.2 function IDs"),
	K(0, "psci: Trusted OS migration not required"),
	K(0, "psci: SMC Calling Convention v1.2"),
	K(0, "percpu: Embedded 31 pages/cpu s86824 r8192 d31960 u126976"),
	K(0, "pcpu-alloc: s86824 r8192 d31960 u126976 alloc=31*4096"),
	K(0, "pcpu-alloc: [0] 0 [0] 1 [0] 2 [0] 3 "),
	K(0, "Detected PIPT I-cache on CPU0"),
	K(0, "CPU features: detected: GIC system register CPU interface"),
	K(0, "CPU features: detected: Spectre-v2"),
	K(0, "CPU features: detected: Spectre-v3a"),
	K(0, "CPU features: detected: Spectre-BHB"),
	K(0, "CPU features: detected: ARM erratum 1742098"),
	K(0, "CPU features: detected: ARM errata 1165522, 1319367, or 1530923"),
	K(0, "alternatives: applying boot alternatives"),
	K(0, "Fallback order for Node 0: 0 "),
	K(0, "Built 1 zonelists, mobility grouping on.  Total pages: 258048"),
	K(0, "Policy zone: DMA"),
	{ 0, KL_CMDLINE, "Kernel command line: " },
	K(0, "Dentry cache hash table entries: 131072 (order: 8, 1048576 bytes, linear)"),
	K(0, "Inode-cache hash table entries: 65536 (order: 7, 524288 bytes, linear)"),
	K(0, "mem auto-init: stack:all(zero), heap alloc:on, heap free:off"),
	K(0, "software IO TLB: area num 4."),
	K(0, "software IO TLB: mapped [mem 0x0000000078000000-0x000000007c000000] (64MB)"),
	K(0, "Memory: 912340K/1048576K available (11712K kernel code, 2398K rwdata, 7260K rodata, "
	     "5248K init, 613K bss, 103468K reserved, 32768K cma-reserved)"),
	K(0, "SLUB: HWalign=64, Order=0-3, MinObjects=0, CPUs=4, Nodes=1"),
	K(0, "ftrace: allocating 40177 entries in 157 pages"),
	K(0, "ftrace: allocated 157 pages with 6 groups"),
	K(0, "trace event string verifier disabled"),
	K(0, "rcu: Hierarchical RCU implementation."),
	K(0, "rcu: \tRCU restricting CPUs from NR_CPUS=256 to nr_cpu_ids=4."),
	K(0, "\tRude variant of Tasks RCU enabled."),
	K(0, "\tTracing variant of Tasks RCU enabled."),
	K(0, "rcu: RCU calculated value of scheduler-enlistment delay is 25 jiffies."),
	K(0, "rcu: Adjusting geometry for rcu_fanout_leaf=16, nr_cpu_ids=4"),
	K(0, "NR_IRQS: 64, nr_irqs: 64, preallocated irqs: 0"),
	K(0, "Root IRQ handler: gic_handle_irq"),
	K(0, "GIC: Using split EOI/Deactivate mode"),
	K(0, "rcu: srcu_init: Setting srcu_struct sizes based on contention."),
	K(0, "arch_timer: cp15 timer(s) running at 54.00MHz (phys)."),
	K(0, "clocksource: arch_sys_counter: mask: 0xffffffffffffff max_cycles: 0xc743ce346, "
	     "max_idle_ns: 440795203123 ns"),
	K(0, "sched_clock: 56 bits at 54MHz, resolution 18ns, wraps every 4398046511102ns"),
	K(2, "Console: colour dummy device 80x25"),
	K(3, "Calibrating delay loop (skipped), value calculated using timer frequency.. 108.00 "
	     "BogoMIPS (lpj=216000)"),
	K(4, "pid_max: default: 32768 minimum: 301"),
	K(6, "LSM: Security Framework initializing"),
	K(7, "landlock: Up and running."),
	K(8, "Yama: disabled by default; enable with sysctl kernel.yama.*"),
	K(10, "AppArmor: AppArmor initialized"),
	K(11, "Mount-cache hash table entries: 2048 (order: 2, 16384 bytes, linear)"),
	K(12, "Mountpoint-cache hash table entries: 2048 (order: 2, 16384 bytes, linear)"),
	K(20, "rcu: Hierarchical SRCU implementation."),
	K(21, "rcu: \tMax phase no-delay instances is 1000."),
	K(24, "EFI services will not be available."),
	K(26, "smp: Bringing up secondary CPUs ..."),
	K(30, "Detected PIPT I-cache on CPU1"),
	K(31, "CPU1: Booted secondary processor 0x0000000001 [0x411fd070]"),
	K(35, "Detected PIPT I-cache on CPU2"),
	K(36, "CPU2: Booted secondary processor 0x0000000002 [0x411fd070]"),
	K(40, "Detected PIPT I-cache on CPU3"),
	K(41, "CPU3: Booted secondary processor 0x0000000003 [0x411fd070]"),
	K(42, "smp: Brought up 1 node, 4 CPUs"),
	K(43, "SMP: Total of 4 processors activated."),
	K(44, "CPU features: detected: 32-bit EL0 Support"),
	K(45, "CPU features: detected: CRC32 instructions"),
	K(46, "CPU: All CPU(s) started at EL2"),
	K(47, "alternatives: applying system-wide alternatives"),
	K(55, "devtmpfs: initialized"),
	K(58, "clocksource: jiffies: mask: 0xffffffff max_cycles: 0xffffffff, max_idle_ns: "
	      "7645041785100000 ns"),
	K(59, "futex hash table entries: 1024 (order: 4, 65536 bytes, linear)"),
	K(61, "pinctrl core: initialized pinctrl subsystem"),
	K(63, "DMI not present or invalid."),
	K(65, "NET: Registered PF_NETLINK/PF_ROUTE protocol family"),
	K(67, "DMA: preallocated 128 KiB GFP_KERNEL pool for atomic allocations"),
	K(68, "DMA: preallocated 128 KiB GFP_KERNEL|GFP_DMA pool for atomic allocations"),
	K(69, "DMA: preallocated 128 KiB GFP_KERNEL|GFP_DMA32 pool for atomic allocations"),
	K(70, "audit: initializing netlink subsys (disabled)"),
	K(72, "audit: type=2000 audit(0.072:1): state=initialized audit_enabled=0 res=1"),
	K(74, "thermal_sys: Registered thermal governor 'fair_share'"),
	K(74, "thermal_sys: Registered thermal governor 'bang_bang'"),
	K(75, "thermal_sys: Registered thermal governor 'step_wise'"),
	K(75, "thermal_sys: Registered thermal governor 'user_space'"),
	K(76, "cpuidle: using governor ladder"),
	K(76, "cpuidle: using governor menu"),
	K(78, "hw-breakpoint: found 6 breakpoint and 4 watchpoint registers."),
	K(79, "ASID allocator initialised with 65536 entries"),
	K(82, "Serial: AMBA PL011 UART driver"),
	K(85, "fe201000.serial: ttyAMA0 at MMIO 0xfe201000 (irq = 14, base_baud = 0) is a PL011 "
	      "rev2"),
	K(86, "printk: console [ttyAMA0] enabled"),
	K(120, "HugeTLB: registered 1.00 GiB page size, pre-allocated 0 pages"),
	K(121, "HugeTLB: registered 2.00 MiB page size, pre-allocated 0 pages"),
	K(130, "iommu: Default domain type: Translated"),
	K(135, "SCSI subsystem initialized"),
	K(137, "usbcore: registered new interface driver usbfs"),
	K(138, "usbcore: registered new interface driver hub"),
	K(139, "usbcore: registered new device driver usb"),
	K(141, "pps_core: LinuxPPS API ver. 1 registered"),
	K(142, "PTP clock support registered"),
	K(143, "EDAC MC: Ver: 3.0.0"),
	K(146, "NetLabel: Initializing"),
	K(146, "NetLabel:  domain hash size = 128"),
	K(147, "NetLabel:  protocols = UNLABELED CIPSOv4 CALIPSO"),
	K(147, "NetLabel:  unlabeled traffic allowed by default"),
	K(155, "clocksource: Switched to clocksource arch_sys_counter"),
	K(170, "VFS: Disk quotas dquot_6.6.0"),
	K(171, "VFS: Dquot-cache hash table entries: 512 (order 0, 4096 bytes)"),
	K(175, "AppArmor: AppArmor Filesystem Enabled"),
	K(190, "NET: Registered PF_INET protocol family"),
	K(191, "IP idents hash table entries: 16384 (order: 5, 131072 bytes, linear)"),
	K(193, "tcp_listen_portaddr_hash hash table entries: 512 (order: 1, 8192 bytes, linear)"),
	K(194, "Table-perturb hash table entries: 65536 (order: 6, 262144 bytes, linear)"),
	K(195, "TCP established hash table entries: 8192 (order: 4, 65536 bytes, linear)"),
	K(196, "TCP bind hash table entries: 8192 (order: 6, 262144 bytes, linear)"),
	K(197, "TCP: Hash tables configured (established 8192 bind 8192)"),
	K(198, "UDP hash table entries: 512 (order: 2, 16384 bytes, linear)"),
	K(199, "UDP-Lite hash table entries: 512 (order: 2, 16384 bytes, linear)"),
	K(201, "NET: Registered PF_UNIX/PF_LOCAL protocol family"),
	K(202, "NET: Registered PF_XDP protocol family"),
	K(203, "PCI: CLS 0 bytes, default 64"),
	{ 205, KL_RD, "Trying to unpack rootfs image as initramfs..." },
	K(210, "hw perfevents: enabled with armv8_cortex_a57 PMU driver, 7 counters available"),
	K(212, "kvm [1]: IPA Size Limit: 44 bits"),
	K(214, "kvm [1]: vgic interrupt IRQ9"),
	K(215, "kvm [1]: Hyp mode initialized successfully"),
	K(230, "Initialise system trusted keyrings"),
	K(232, "workingset: timestamp_bits=42 max_order=18 bucket_order=0"),
	K(240, "squashfs: version 4.0"),
	K(242, "fuse: init (API version 7.37)"),
	K(250, "integrity: Platform Keyring initialized"),
	K(300, "Key type asymmetric registered"),
	K(301, "Asymmetric key parser 'x509' registered"),
	K(320, "Block layer SCSI generic (bsg) driver version 0.4 loaded (major 247)"),
	K(322, "io scheduler mq-deadline registered"),
	{ 380, KL_RD, "Freeing initrd memory: 8192K" },
	K(400, "Serial: 8250/16550 driver, 4 ports, IRQ sharing enabled"),
	K(410, "sdhci: Secure Digital Host Controller Interface driver"),
	K(411, "sdhci-pltfm: SDHCI platform and OF driver helper"),
	K(430, "mmc1: SDHCI controller on fe320000.mmc [fe320000.mmc] using ADMA"),
	{ 440, KL_MID, NULL },
	K(450, "ledtrig-cpu: registered to indicate activity on CPUs"),
	K(455, "hid: raw HID events driver"),
	K(457, "usbcore: registered new interface driver usbhid"),
	K(458, "usbhid: USB HID core driver"),
	K(470, "NET: Registered PF_INET6 protocol family"),
	K(475, "Segment Routing with IPv6"),
	K(476, "In-situ OAM (IOAM) with IPv6"),
	K(478, "mip6: Mobile IPv6"),
	K(480, "NET: Registered PF_PACKET protocol family"),
	K(482, "Key type dns_resolver registered"),
	K(490, "registered taskstats version 1"),
	K(491, "Loading compiled-in X.509 certificates"),
	K(510, "zswap: loaded using pool lzo/zbud"),
	K(515, "Key type .fscrypt registered"),
	K(516, "Key type fscrypt-provisioning registered"),
	K(540, "mmc1: new high speed SDHC card at address aaaa"),
	K(545, "mmcblk1: mmc1:aaaa SC16G 14.8 GiB"),
	K(550, " mmcblk1: p1 p2"),
	K(560, "dwc2 fe980000.usb: supply vusb_d not found, using dummy regulator"),
	K(562, "dwc2 fe980000.usb: DWC OTG Controller"),
	K(563, "dwc2 fe980000.usb: new USB bus registered, assigned bus number 1"),
	K(564, "dwc2 fe980000.usb: irq 24, io mem 0xfe980000"),
	K(566, "usb usb1: New USB device found, idVendor=1d6b, idProduct=0002, bcdDevice= 6.01"),
	K(567, "usb usb1: New USB device strings: Mfr=3, Product=2, SerialNumber=1"),
	K(568, "usb usb1: Product: DWC OTG Controller"),
	K(569, "usb usb1: Manufacturer: Linux 6.1.0-sim dwc2_hsotg"),
	K(570, "usb usb1: SerialNumber: fe980000.usb"),
	K(572, "hub 1-0:1.0: USB hub found"),
	K(573, "hub 1-0:1.0: 1 port detected"),
	K(600, "sim-eth fe300000.ethernet eth0: registered, MAC 52:54:00:12:34:56"),
	K(640, "clk: Disabling unused clocks"),
	K(642, "ALSA device list:"),
	K(643, "  No soundcards found."),
	{ 650, KL_ROOT, NULL },
	{ 660, KL_NORD, "EXT4-fs (mmcblk1p2): mounted filesystem with ordered data mode. Quota "
			"mode: none." },
	{ 661, KL_NORD, "VFS: Mounted root (ext4 filesystem) on device 179:2." },
	{ 662, KL_NORD, "devtmpfs: mounted" },
	K(670, "Freeing unused kernel memory: 5248K"),
	K(700, "Checked W+X mappings: passed, no W+X pages found"),
	{ 701, KL_INIT, NULL },
	K(704, "  with environment:"),
	K(705, "    HOME=/"),
	K(706, "    TERM=linux"),
	K(820, "systemd[1]: Inserted module 'autofs4'"),
	K(860, "systemd[1]: systemd 252.30-1~deb12u2 running in system mode (+PAM +AUDIT +SELINUX "
	       "+APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL "
	       "+ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 "
	       "-PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK "
	       "-XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified)"),
	K(861, "systemd[1]: Detected architecture arm64."),
	U(862, "\r\nWelcome to \033[1mDebian GNU/Linux 12 (bookworm)\033[0m!\r\n"),
	K(880, "systemd[1]: Hostname set to <%s>."),
	K(940, "systemd[1]: Queued start job for default target graphical.target."),
	U(960, "[\033[0;32m  OK  \033[0m] Created slice \033[0;1;39msystem-getty.slice\033[0m - "
	       "Slice /system/getty."),
	U(962, "[\033[0;32m  OK  \033[0m] Created slice \033[0;1;39msystem-modprobe.slice\033[0m - "
	       "Slice /system/modprobe."),
	U(964, "[\033[0;32m  OK  \033[0m] Created slice \033[0;1;39msystem-serial\\x2dgetty.slice"
	       "\033[0m - Slice /system/serial-getty."),
	U(966, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mcryptsetup.target\033[0m - "
	       "Local Encrypted Volumes."),
	U(968, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mpaths.target\033[0m - Path "
	       "Units."),
	U(970, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mslices.target\033[0m - Slice "
	       "Units."),
	U(975, "[\033[0;32m  OK  \033[0m] Listening on \033[0;1;39msystemd-journald.socket"
	       "\033[0m - Journal Socket."),
	U(990, "         Mounting \033[0;1;39msys-kernel-debug.mount\033[0m - Kernel Debug File "
	       "System..."),
	K(1010, "EXT4-fs (mmcblk1p2): re-mounted. Quota mode: none."),
	U(1030, "[\033[0;32m  OK  \033[0m] Mounted \033[0;1;39msys-kernel-debug.mount\033[0m - "
		"Kernel Debug File System."),
	U(1060, "[\033[0;32m  OK  \033[0m] Started \033[0;1;39msystemd-journald.service\033[0m - "
		"Journal Service."),
	U(1080, "         Starting \033[0;1;39msystemd-udevd.service\033[0m - Rule-based Manager "
		"for Device Events and Files..."),
	U(1140, "[\033[0;32m  OK  \033[0m] Started \033[0;1;39msystemd-udevd.service\033[0m - "
		"Rule-based Manager for Device Events and Files."),
	U(1180, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mlocal-fs.target\033[0m - "
		"Local File Systems."),
	U(1200, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39msysinit.target\033[0m - "
		"System Initialization."),
	K(1230, "sim-eth fe300000.ethernet eth0: Link is Up - 1Gbps/Full - flow control rx/tx"),
	K(1231, "IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready"),
	U(1260, "[\033[0;32m  OK  \033[0m] Started \033[0;1;39msystemd-networkd.service\033[0m - "
		"Network Configuration."),
	U(1280, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mnetwork.target\033[0m - "
		"Network."),
	U(1300, "         Starting \033[0;1;39mssh.service\033[0m - OpenBSD Secure Shell "
		"server..."),
	U(1380, "[\033[0;32m  OK  \033[0m] Started \033[0;1;39mssh.service\033[0m - OpenBSD Secure "
		"Shell server."),
	U(1420, "[\033[0;32m  OK  \033[0m] Started \033[0;1;39mserial-getty@ttyAMA0.service\033[0m "
		"- Serial Getty on ttyAMA0."),
	U(1440, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mgetty.target\033[0m - Login "
		"Prompts."),
	U(1460, "[\033[0;32m  OK  \033[0m] Reached target \033[0;1;39mmulti-user.target\033[0m - "
		"Multi-User System."),
	{ 1500, KL_END, NULL },
};

#undef K
#undef U
