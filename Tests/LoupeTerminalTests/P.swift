enum _TLoupeTerminalTests {}
