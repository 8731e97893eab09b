// NCCL and PyTorch environment per network fabric: the one table a reviewer
// opens to see why a variable is set. Values are strings (Kubernetes env).
{
  // Always set for distributed training.
  common: {
    TORCH_NCCL_ASYNC_ERROR_HANDLING: '1',  // fail fast instead of hanging on a dead peer
    TORCH_NCCL_AVOID_RECORD_STREAMS: '1',  // NeMo launcher default; lowers memory use
    NCCL_DEBUG: 'WARN',
  },
  // InfiniBand / RoCE through the NVIDIA Network Operator (GPUDirect RDMA).
  infiniband: {
    NCCL_IB_DISABLE: '0',
    NCCL_SOCKET_IFNAME: 'eth0',  // bootstrap over the pod network; data over the HCAs
  },
  // No RDMA device: NCCL falls back to TCP sockets on the pod network.
  tcp: {
    NCCL_IB_DISABLE: '1',
    NCCL_SOCKET_IFNAME: 'eth0',
  },
  // AWS Elastic Fabric Adapter through libfabric and aws-ofi-nccl. Minimal by
  // the EFA cheatsheet (libfabric >= 1.18, aws-ofi-nccl >= 1.7): only the
  // hugepage fork fix is still needed; FI_PROVIDER makes a missing EFA device
  // fail loudly instead of falling back to TCP.
  efa: {
    FI_PROVIDER: 'efa',
    FI_EFA_USE_HUGE_PAGE: '0',  // os.fork() in data loaders fails with hugepage-backed buffers
    NCCL_SOCKET_IFNAME: '^lo,docker',
  },
  // Google gIB (GPUDirect RDMA over RoCE on A4): the plugin's own
  // set_nccl_env.sh sets the NCCL_* tuning; these are the recipe's additions.
  gib: {
    NCCL_PLUGIN_PATH: '/usr/local/gib/lib64',
    LD_LIBRARY_PATH: '/usr/local/gib/lib64:/usr/local/nvidia/lib64',
    GLOO_SOCKET_IFNAME: 'eth0',
    NVTE_UB_SOCKET_IFNAME: 'eth1',
  },
}
