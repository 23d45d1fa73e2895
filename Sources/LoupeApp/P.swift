package enum _P {}
