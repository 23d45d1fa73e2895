enum _TLoupeKitTests {}
