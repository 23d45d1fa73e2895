enum _TLoupeTUITests {}
