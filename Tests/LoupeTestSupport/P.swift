enum _TLoupeTestSupport {}
