// Included last by the sources of the shard's transport-free core (WorldShard and its Play
// stream logic): the build fails if anything they include has brought gRPC in. The core speaks
// telos Status and the fleet.proto messages only; world_service.cc, the thin gRPC adapter, is the
// one place that maps onto gRPC, so the in-process link `telos serve` uses never touches a gRPC
// type. No include guard: every includer is checked.
#if defined(GRPCPP_GRPCPP_H) || defined(GRPCPP_SUPPORT_STATUS_H) || \
    defined(GRPCPP_IMPL_CODEGEN_STATUS_H) || defined(GRPCPP_SERVER_CONTEXT_H)
#error "the shard core is transport-free: gRPC belongs in world_service.cc (the adapter)"
#endif
