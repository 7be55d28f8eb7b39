"""Memory Studio: static HTML, CSS and JavaScript modules (no build step), served by
`memroute.web.pages` and talking to the REST API only."""
