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
}
