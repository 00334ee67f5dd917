"""Operations: /healthz for load balancers and /metrics for Prometheus."""
