package shop;

public enum Status { NEW, PAID, CANCELLED }
