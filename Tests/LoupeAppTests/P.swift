enum _TLoupeAppTests {}
