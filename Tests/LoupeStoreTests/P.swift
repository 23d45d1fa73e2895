enum _TLoupeStoreTests {}
