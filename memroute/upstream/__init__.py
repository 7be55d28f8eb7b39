"""HTTP to upstream providers: routes, request helpers, the reranker."""
